$offlisting
$offdigit

EQUATIONS
	budget_0__hi
	budget_1__hi
	budget_2__hi
	budget_3__hi
	budget_4__hi
	budget_5__hi
	objective;

POSITIVE VARIABLES
	alpha_1_
	alpha_7_
	alpha_13_
	alpha_24_
	alpha_2_
	alpha_8_
	alpha_14_
	alpha_19_
	alpha_3_
	alpha_9_
	alpha_15_
	alpha_20_
	alpha_4_
	alpha_10_
	alpha_16_
	alpha_21_
	alpha_5_
	alpha_11_
	alpha_17_
	alpha_22_
	alpha_6_
	alpha_12_
	alpha_18_
	alpha_23_;

VARIABLES
	GAMS_OBJECTIVE
	;


budget_0__hi.. alpha_1_ + alpha_7_ + alpha_13_ + alpha_24_ =l= 1 ;
budget_1__hi.. alpha_2_ + alpha_8_ + alpha_14_ + alpha_19_ =l= 1 ;
budget_2__hi.. alpha_3_ + alpha_9_ + alpha_15_ + alpha_20_ =l= 1 ;
budget_3__hi.. alpha_4_ + alpha_10_ + alpha_16_ + alpha_21_ =l= 1 ;
budget_4__hi.. alpha_5_ + alpha_11_ + alpha_17_ + alpha_22_ =l= 1 ;
budget_5__hi.. alpha_6_ + alpha_12_ + alpha_18_ + alpha_23_ =l= 1 ;
objective.. GAMS_OBJECTIVE =e= (4*alpha_1_ + 4*alpha_2_ + 4*alpha_3_ + 4*alpha_4_ + 4*alpha_5_ + 4*alpha_6_ + 2*alpha_7_ + alpha_8_ + 2*alpha_9_ + 2*alpha_10_ + 2*alpha_11_ + 2*alpha_12_ + alpha_13_ + 2*alpha_14_ + 3*alpha_15_ + alpha_16_ + 2*alpha_17_ + alpha_18_ + 2*alpha_19_ + 3*alpha_20_ + alpha_21_ + alpha_22_ + alpha_23_ + 2*alpha_24_) - (13.475155333764434*alpha_1_*alpha_1_ + 10.879621130512508*alpha_2_*alpha_2_ + 21.18933019057431*alpha_1_*alpha_2_ + 4.788208085437065*alpha_3_*alpha_3_ + (-0.2944965936447199)*alpha_1_*alpha_3_ + 4.131208556642254*alpha_2_*alpha_3_ + 30.596645036238357*alpha_4_*alpha_4_ + 4.592774855230555*alpha_1_*alpha_4_ + 7.91138555016027*alpha_2_*alpha_4_ + (-5.14480105059747)*alpha_3_*alpha_4_ + 15.934803621319968*alpha_5_*alpha_5_ + 3.4374222536028558*alpha_1_*alpha_5_ + 6.7046961181229676*alpha_2_*alpha_5_ + (-2.4237645653671289)*alpha_3_*alpha_5_ + 41.423374387571229*alpha_4_*alpha_5_ + 23.583277431344399*alpha_6_*alpha_6_ + 7.7988575210562558*alpha_1_*alpha_6_ + 14.555533730915219*alpha_2_*alpha_6_ + 4.2073875408430617*alpha_3_*alpha_6_ + 47.60987956924618*alpha_4_*alpha_6_ + 35.951161292824949*alpha_5_*alpha_6_ + 9.969822896873047*alpha_7_*alpha_7_ + 11.345132614702058*alpha_1_*alpha_7_ + 7.252520174159242*alpha_2_*alpha_7_ + (-6.668997696224119)*alpha_3_*alpha_7_ + 4.8562706499375725*alpha_4_*alpha_7_ + 1.248364257426573*alpha_5_*alpha_7_ + (-0.84203836989797587)*alpha_6_*alpha_7_ + 1.3616209713793104*alpha_8_*alpha_8_ + 2.285387997578323*alpha_1_*alpha_8_ + 3.0965531358929206*alpha_2_*alpha_8_ + (-1.079120282861651)*alpha_3_*alpha_8_ + 0.59350614995227069*alpha_4_*alpha_8_ + 0.68501919282009638*alpha_5_*alpha_8_ + 0.5458627843360757*alpha_6_*alpha_8_ + 5.779091647412957*alpha_7_*alpha_8_ + 9.915157653942824*alpha_9_*alpha_9_ + (-2.0756074705755987)*alpha_1_*alpha_9_ + (-5.543279089343784)*alpha_2_*alpha_9_ + 2.639382853431178*alpha_3_*alpha_9_ + (-20.263697418708819)*alpha_4_*alpha_9_ + (-13.385984421795978)*alpha_5_*alpha_9_ + (-15.495634833425276)*alpha_6_*alpha_9_ + (-13.687691349037904)*alpha_7_*alpha_9_ + (-5.6693523306799305)*alpha_8_*alpha_9_ + 18.38521462008149*alpha_10_*alpha_10_ + (-9.5489724894615069)*alpha_1_*alpha_10_ + (-2.6039206569798719)*alpha_2_*alpha_10_ + (-4.797352867014403)*alpha_3_*alpha_10_ + 34.002743035472164*alpha_4_*alpha_10_ + 20.04078620885339*alpha_5_*alpha_10_ + 21.722240607396454*alpha_6_*alpha_10_ + 8.650797247647796*alpha_7_*alpha_10_ + 4.165316997825396*alpha_8_*alpha_10_ + (-22.319197535317947)*alpha_9_*alpha_10_ + 7.5319767294053399*alpha_11_*alpha_11_ + (-4.5380454466153326)*alpha_1_*alpha_11_ + (-2.9810486545313983)*alpha_2_*alpha_11_ + (-7.4401323712072447)*alpha_3_*alpha_11_ + 15.32271067277536*alpha_4_*alpha_11_ + 7.527438118682643*alpha_5_*alpha_11_ + 4.633083333265009*alpha_6_*alpha_11_ + 8.946601375664283*alpha_7_*alpha_11_ + 3.4235380822836774*alpha_8_*alpha_11_ + (-12.582456653727069)*alpha_9_*alpha_11_ + 20.62515303441249*alpha_10_*alpha_11_ + 8.118858696638881*alpha_12_*alpha_12_ + 0.76149127180478349*alpha_1_*alpha_12_ + (-0.025673363906022928)*alpha_2_*alpha_12_ + (-5.8985693185629255)*alpha_3_*alpha_12_ + 24.938200951493155*alpha_4_*alpha_12_ + 15.174004465064449*alpha_5_*alpha_12_ + 14.847396903844112*alpha_6_*alpha_12_ + 10.457224137087657*alpha_7_*alpha_12_ + 2.26383247270706*alpha_8_*alpha_12_ + (-14.381265059236974)*alpha_9_*alpha_12_ + 19.635742657898088*alpha_10_*alpha_12_ + 11.418096426208098*alpha_11_*alpha_12_ + 6.7959469952378919*alpha_13_*alpha_13_ + 9.240628281993629*alpha_1_*alpha_13_ + 6.7806818421052988*alpha_2_*alpha_13_ + 5.448849023717704*alpha_3_*alpha_13_ + (-0.6671150148754239)*alpha_4_*alpha_13_ + 2.3153873780981069*alpha_5_*alpha_13_ + 6.521794106297566*alpha_6_*alpha_13_ + (-0.089461001364006698)*alpha_7_*alpha_13_ + (-1.267377928378437)*alpha_8_*alpha_13_ + 2.210504602501385*alpha_9_*alpha_13_ + (-10.726839370998983)*alpha_10_*alpha_13_ + (-10.245515339836446)*alpha_11_*alpha_13_ + (-1.2129391300874017)*alpha_12_*alpha_13_ + 8.599064674071735*alpha_14_*alpha_14_ + 8.157752706895131*alpha_1_*alpha_14_ + 11.505442720289462*alpha_2_*alpha_14_ + 5.851252434928642*alpha_3_*alpha_14_ + 5.786556676091033*alpha_4_*alpha_14_ + 4.581908199222754*alpha_5_*alpha_14_ + 11.60044051084048*alpha_6_*alpha_14_ + 9.443859334326891*alpha_7_*alpha_14_ + 4.172896195377511*alpha_8_*alpha_14_ + (-12.484772541698971)*alpha_9_*alpha_14_ + 7.0407794127411965*alpha_10_*alpha_14_ + 0.6339704789922771*alpha_11_*alpha_14_ + 5.3046720768762476*alpha_12_*alpha_14_ + 6.940622637315563*alpha_13_*alpha_14_ + 8.032457046554213*alpha_15_*alpha_15_ + 1.277230825432424*alpha_1_*alpha_15_ + (-2.673215917704046)*alpha_2_*alpha_15_ + 4.1320732657972785*alpha_3_*alpha_15_ + (-13.487366704001008)*alpha_4_*alpha_15_ + (-8.81025810386691)*alpha_5_*alpha_15_ + (-8.40574659942917)*alpha_6_*alpha_15_ + (-11.140244640941495)*alpha_7_*alpha_15_ + (-5.579564300714146)*alpha_8_*alpha_15_ + 16.347754548797553*alpha_9_*alpha_15_ + (-20.09094741256015)*alpha_10_*alpha_15_ + (-13.287685165376299)*alpha_11_*alpha_15_ + (-10.36418520080376)*alpha_12_*alpha_15_ + 7.012637031026248*alpha_13_*alpha_15_ + (-7.42172075193458)*alpha_14_*alpha_15_ + 5.090854440960225*alpha_16_*alpha_16_ + 7.133611862245981*alpha_1_*alpha_16_ + 6.8313534223073686*alpha_2_*alpha_16_ + 2.3489177114849906*alpha_3_*alpha_16_ + 10.438497448633189*alpha_4_*alpha_16_ + 9.380647775680316*alpha_5_*alpha_16_ + 13.078761027541605*alpha_6_*alpha_16_ + 5.553936210067448*alpha_7_*alpha_16_ + 1.3991997173230442*alpha_8_*alpha_16_ + (-7.331465821054756)*alpha_9_*alpha_16_ + 2.6857789738868147*alpha_10_*alpha_16_ + (-1.6889330506836169)*alpha_11_*alpha_16_ + 6.1714955294829927*alpha_12_*alpha_16_ + 9.050771338223771*alpha_13_*alpha_16_ + 10.034137524597508*alpha_14_*alpha_16_ + (-2.1820563409360614)*alpha_15_*alpha_16_ + 12.072135548338014*alpha_17_*alpha_17_ + (-1.4734195495485316)*alpha_1_*alpha_17_ + (-5.3376565235035436)*alpha_2_*alpha_17_ + (-6.6468207089737597)*alpha_3_*alpha_17_ + 24.660454649351593*alpha_4_*alpha_17_ + 19.924394004255095*alpha_5_*alpha_17_ + 16.464962370746544*alpha_6_*alpha_17_ + (-0.675322242502947)*alpha_7_*alpha_17_ + (-2.37159102901203)*alpha_8_*alpha_17_ + (-2.8113204671882546)*alpha_9_*alpha_17_ + 6.6458284168705966*alpha_10_*alpha_17_ + 2.4844865275693273*alpha_11_*alpha_17_ + 11.239271695766952*alpha_12_*alpha_17_ + 4.2020891086509407*alpha_13_*alpha_17_ + (-4.768739069158948)*alpha_14_*alpha_17_ + 0.4950804885791018*alpha_15_*alpha_17_ + 6.2312937073738457*alpha_16_*alpha_17_ + 8.445072470567064*alpha_18_*alpha_18_ + 3.7925656822524543*alpha_1_*alpha_18_ + 7.6099735396803725*alpha_2_*alpha_18_ + 6.374640116835949*alpha_3_*alpha_18_ + 14.49167740257062*alpha_4_*alpha_18_ + 13.853803057523557*alpha_5_*alpha_18_ + 20.645774926357493*alpha_6_*alpha_18_ + 1.2986976856107546*alpha_7_*alpha_18_ + 1.2499840477793249*alpha_8_*alpha_18_ + (-8.900210816200065)*alpha_9_*alpha_18_ + 5.8234973201725539*alpha_10_*alpha_18_ + (-2.7351784834833568)*alpha_11_*alpha_18_ + 5.660307390707597*alpha_12_*alpha_18_ + 10.060929452453276*alpha_13_*alpha_18_ + 12.751349910632124*alpha_14_*alpha_18_ + (-3.1438322661264904)*alpha_15_*alpha_18_ + 11.800098817977686*alpha_16_*alpha_18_ + 6.2907403293665078*alpha_17_*alpha_18_ + 5.887544908473483*alpha_19_*alpha_19_ + 2.2717705819463863*alpha_1_*alpha_19_ + 6.630943354466911*alpha_2_*alpha_19_ + 1.8736296525581075*alpha_3_*alpha_19_ + 1.7792975355194862*alpha_4_*alpha_19_ + 0.19536167170150298*alpha_5_*alpha_19_ + 3.4389301010517719*alpha_6_*alpha_19_ + 8.862912679945745*alpha_7_*alpha_19_ + 4.8668642277070795*alpha_8_*alpha_19_ + (-11.67070995474512)*alpha_9_*alpha_19_ + 10.893374003395927*alpha_10_*alpha_19_ + 6.343804513963345*alpha_11_*alpha_19_ + 3.8137846039302459*alpha_12_*alpha_19_ + (-2.6103191800022403)*alpha_13_*alpha_19_ + 10.876934821180066*alpha_14_*alpha_19_ + (-10.798097267905527)*alpha_15_*alpha_19_ + 2.5386482180879906*alpha_16_*alpha_19_ + (-8.986071744523505)*alpha_17_*alpha_19_ + 3.9670116648724933*alpha_18_*alpha_19_ + 4.895377824770449*alpha_20_*alpha_20_ + (-3.6473348896527429)*alpha_1_*alpha_20_ + 1.2611453850025169*alpha_2_*alpha_20_ + 8.08372575850803*alpha_3_*alpha_20_ + (-11.92113176530528)*alpha_4_*alpha_20_ + (-6.999490883296195)*alpha_5_*alpha_20_ + (-2.8825006931530428)*alpha_6_*alpha_20_ + (-9.21644440432053)*alpha_7_*alpha_20_ + (-1.1689083128274351)*alpha_8_*alpha_20_ + 6.1219436125192708*alpha_9_*alpha_20_ + (-7.0256029897721968)*alpha_10_*alpha_20_ + (-6.734903859558013)*alpha_11_*alpha_20_ + (-9.915649176996137)*alpha_12_*alpha_20_ + 0.64671659519284019*alpha_13_*alpha_20_ + 0.7882006451642507*alpha_14_*alpha_20_ + 4.414913721486403*alpha_15_*alpha_20_ + (-2.800491768633705)*alpha_16_*alpha_20_ + (-9.953221664741116)*alpha_17_*alpha_20_ + 0.6182615667623743*alpha_18_*alpha_20_ + 1.0010169657185157*alpha_19_*alpha_20_ + 1.8253797121503439*alpha_21_*alpha_21_ + (-0.47050801779495455)*alpha_1_*alpha_21_ + 1.0590411139969704*alpha_2_*alpha_21_ + (-2.3132039830707303)*alpha_3_*alpha_21_ + 8.428049492376416*alpha_4_*alpha_21_ + 5.755222291438338*alpha_5_*alpha_21_ + 5.478884031401632*alpha_6_*alpha_21_ + 5.3521478819331296*alpha_7_*alpha_21_ + 2.450713397709978*alpha_8_*alpha_21_ + (-8.058341644645906)*alpha_9_*alpha_21_ + 9.996269147081477*alpha_10_*alpha_21_ + 6.3541752102081*alpha_11_*alpha_21_ + 5.889493435629818*alpha_12_*alpha_21_ + (-2.6936514103987035)*alpha_13_*alpha_21_ + 3.4563622028623353*alpha_14_*alpha_21_ + (-7.493370176317789)*alpha_15_*alpha_21_ + 1.7673603844366736*alpha_16_*alpha_21_ + 1.6326253072737678*alpha_17_*alpha_21_ + 2.2399829259391453*alpha_18_*alpha_21_ + 4.484957745596838*alpha_19_*alpha_21_ + (-2.8781754513988465)*alpha_20_*alpha_21_ + 3.0304613779892184*alpha_22_*alpha_22_ + (-7.113657482537099)*alpha_1_*alpha_22_ + (-6.7952590128019175)*alpha_2_*alpha_22_ + (-4.355928161745231)*alpha_3_*alpha_22_ + 8.998318620427351*alpha_4_*alpha_22_ + 6.0203563066066357*alpha_5_*alpha_22_ + 2.8522262128694349*alpha_6_*alpha_22_ + (-3.3146099714722759)*alpha_7_*alpha_22_ + (-1.2340081571740786)*alpha_8_*alpha_22_ + 0.03956879929357715*alpha_9_*alpha_22_ + 6.731928076192213*alpha_10_*alpha_22_ + 4.8799709711126305*alpha_11_*alpha_22_ + 3.3432680454194017*alpha_12_*alpha_22_ + (-5.450820726460802)*alpha_13_*alpha_22_ + (-6.9953965413933386)*alpha_14_*alpha_22_ + (-1.5524733836034526)*alpha_15_*alpha_22_ + (-3.266338839751976)*alpha_16_*alpha_22_ + 7.102652451172891*alpha_17_*alpha_22_ + (-3.2046556895174456)*alpha_18_*alpha_22_ + (-3.5555433867196196)*alpha_19_*alpha_22_ + (-2.7638859788482009)*alpha_20_*alpha_22_ + 1.1121812425373583*alpha_21_*alpha_22_ + 2.478072667388556*alpha_23_*alpha_23_ + (-1.8596909800939008)*alpha_1_*alpha_23_ + 1.440626831932311*alpha_2_*alpha_23_ + 0.967150268950002*alpha_3_*alpha_23_ + 7.9857252684446136*alpha_4_*alpha_23_ + 3.6043281586379603*alpha_5_*alpha_23_ + 6.2348492010190988*alpha_6_*alpha_23_ + 3.479752887212161*alpha_7_*alpha_23_ + 1.846490108765721*alpha_8_*alpha_23_ + (-7.8697721481107985)*alpha_9_*alpha_23_ + 11.476165725073839*alpha_10_*alpha_23_ + 5.764497946053965*alpha_11_*alpha_23_ + 5.1508810631900035*alpha_12_*alpha_23_ + (-2.676831779912236)*alpha_13_*alpha_23_ + 5.451748058082038*alpha_14_*alpha_23_ + (-6.674345934777511)*alpha_15_*alpha_23_ + 1.3102513966496618*alpha_16_*alpha_23_ + (-2.5167164192744247)*alpha_17_*alpha_23_ + 2.7757459627521133*alpha_18_*alpha_23_ + 6.0720151719545239*alpha_19_*alpha_23_ + (-0.2282759443832848)*alpha_20_*alpha_23_ + 3.0264996351361959*alpha_21_*alpha_23_ + (-0.095660854815085239)*alpha_22_*alpha_23_ + 4.102217892026595*alpha_24_*alpha_24_ + 8.45181543467571*alpha_1_*alpha_24_ + 5.953327533880239*alpha_2_*alpha_24_ + (-0.6307895578933402)*alpha_3_*alpha_24_ + 8.057144608075697*alpha_4_*alpha_24_ + 6.213491185013639*alpha_5_*alpha_24_ + 7.74339026445279*alpha_6_*alpha_24_ + 8.7145602374448*alpha_7_*alpha_24_ + 1.8155087402180472*alpha_8_*alpha_24_ + (-7.1022932853423146)*alpha_9_*alpha_24_ + 2.348556132753968*alpha_10_*alpha_24_ + 0.3259417283198216*alpha_11_*alpha_24_ + 6.859647951585683*alpha_12_*alpha_24_ + 6.9275871858729339*alpha_13_*alpha_24_ + 8.162240768120465*alpha_14_*alpha_24_ + (-2.7308120909388904)*alpha_15_*alpha_24_ + 8.3517270283919789*alpha_16_*alpha_24_ + 5.261789855614597*alpha_17_*alpha_24_ + 7.6955521373497806*alpha_18_*alpha_24_ + 2.4643743509650315*alpha_19_*alpha_24_ + (-5.0022707522967647)*alpha_20_*alpha_24_ + 1.9219177924268638*alpha_21_*alpha_24_ + (-2.959260892946906)*alpha_22_*alpha_24_ + 0.99964891288214508*alpha_23_*alpha_24_) ;

alpha_1_.l = 0.1594775026007062;
alpha_7_.l = 0;
alpha_13_.l = 0.27202081060963634;
alpha_24_.l = 0.5685016867896576;
alpha_2_.l = 0;
alpha_8_.l = 0;
alpha_14_.l = 0;
alpha_19_.l = 1;
alpha_3_.l = 6.9388939039072284e-18;
alpha_9_.l = 1;
alpha_15_.l = 0;
alpha_20_.l = 0;
alpha_4_.l = 0;
alpha_10_.l = 0;
alpha_16_.l = 0;
alpha_21_.l = 0.55517449645995609;
alpha_5_.l = 0;
alpha_11_.l = 0;
alpha_17_.l = 0;
alpha_22_.l = 0.99999999999999989;
alpha_6_.l = 0.0071891658138268895;
alpha_12_.l = 0.042990449391994007;
alpha_18_.l = 0;
alpha_23_.l = 0.28315373562897855;

MODEL GAMS_MODEL /all/ ;
option solprint=off;
option limrow=0;
option limcol=0;
option solvelink=5;
SOLVE GAMS_MODEL USING nlp maximizing GAMS_OBJECTIVE;

Scalars MODELSTAT 'model status', SOLVESTAT 'solve status';
MODELSTAT = GAMS_MODEL.modelstat;
SOLVESTAT = GAMS_MODEL.solvestat;

Scalar OBJEST 'best objective', OBJVAL 'objective value';
OBJEST = GAMS_MODEL.objest;
OBJVAL = GAMS_MODEL.objval;

Scalar NUMVAR 'number of variables';
NUMVAR = GAMS_MODEL.numvar

Scalar NUMEQU 'number of equations';
NUMEQU = GAMS_MODEL.numequ

Scalar NUMDVAR 'number of discrete variables';
NUMDVAR = GAMS_MODEL.numdvar

Scalar NUMNZ 'number of nonzeros';
NUMNZ = GAMS_MODEL.numnz

Scalar ETSOLVE 'time to execute solve statement';
ETSOLVE = GAMS_MODEL.etsolve

