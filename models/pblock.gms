$offlisting
$offdigit

EQUATIONS
	budget_0__hi
	objective;

POSITIVE VARIABLES
	alpha_1_
	alpha_2_
	alpha_3_
	alpha_4_
	alpha_5_
	alpha_6_
	alpha_7_
	alpha_8_
	alpha_9_
	alpha_10_
	alpha_11_
	alpha_12_
	alpha_13_;

VARIABLES
	GAMS_OBJECTIVE
	;


budget_0__hi.. alpha_1_ + alpha_2_ + alpha_3_ + alpha_4_ + alpha_5_ + alpha_6_ + alpha_7_ + alpha_8_ + alpha_9_ + alpha_10_ + alpha_11_ + alpha_12_ + alpha_13_ =l= 6 ;
objective.. GAMS_OBJECTIVE =e= (4*alpha_1_ + 1.8333333333333333*alpha_2_ + alpha_3_ + 0.6666666666666666*alpha_4_ + 2.5*alpha_5_ + 1.6666666666666667*alpha_6_ + 1.8333333333333333*alpha_7_ + 1.3333333333333333*alpha_8_ + alpha_9_ + 1.1666666666666667*alpha_10_ + alpha_11_ + 1.6666666666666667*alpha_12_ + 1.3333333333333333*alpha_13_) - 0.5*((5.272647777544309*alpha_1_*alpha_1_ + 1.4931670730315649*alpha_2_*alpha_2_ + (-2.9481352709197823)*alpha_1_*alpha_2_ + 2.089463678799245*alpha_3_*alpha_3_ + 3.514714256994047*alpha_1_*alpha_3_ + (-3.2711519150914654)*alpha_2_*alpha_3_ + 0.0024775905422557169*alpha_4_*alpha_4_ + (-0.13644666544849865)*alpha_1_*alpha_4_ + 0.0831572496019016*alpha_2_*alpha_4_ + (-0.12942543939485229)*alpha_3_*alpha_4_ + 4.442295461787421*alpha_5_*alpha_5_ + 6.333730368577324*alpha_1_*alpha_5_ + (-2.1178081136338238)*alpha_2_*alpha_5_ + 0.763737995839876*alpha_3_*alpha_5_ + 0.017211581585847305*alpha_4_*alpha_5_ + 0.1432313593364769*alpha_6_*alpha_6_ + 0.9959755162074666*alpha_1_*alpha_6_ + 0.3636286178170928*alpha_2_*alpha_6_ + (-0.3159013167481731)*alpha_3_*alpha_6_ + (-0.0014908772220369442)*alpha_4_*alpha_6_ + 0.40206688411402824*alpha_5_*alpha_6_ + 0.7223050794899148*alpha_7_*alpha_7_ + (-1.4773982553228304)*alpha_1_*alpha_7_ + (-1.214825788538656)*alpha_2_*alpha_7_ + 1.314474776888586*alpha_3_*alpha_7_ + (-0.019974857970879889)*alpha_4_*alpha_7_ + (-0.87173335496645077)*alpha_5_*alpha_7_ + (-0.6184002188290689)*alpha_6_*alpha_7_ + 1.5072195338482208*alpha_8_*alpha_8_ + 2.283544654427231*alpha_1_*alpha_8_ + (-0.2087543749806156)*alpha_2_*alpha_8_ + 1.499857564428058*alpha_3_*alpha_8_ + (-0.0946580355753536)*alpha_4_*alpha_8_ + (-2.1949923458134957)*alpha_5_*alpha_8_ + 0.40804479468846766*alpha_6_*alpha_8_ + (-0.4723822426000566)*alpha_7_*alpha_8_ + 0.1871101419446683*alpha_9_*alpha_9_ + 0.73256420143352696*alpha_1_*alpha_9_ + (-1.0074590440152844)*alpha_2_*alpha_9_ + 1.2155548676569419*alpha_3_*alpha_9_ + (-0.033746045770552818)*alpha_4_*alpha_9_ + 0.21190688164198002*alpha_5_*alpha_9_ + (-0.1625598557780179)*alpha_6_*alpha_9_ + 0.5191399970579471*alpha_7_*alpha_9_ + 0.24758910304717535*alpha_8_*alpha_9_ + 0.4916810463737547*alpha_10_*alpha_10_ + (-0.79128845672996717)*alpha_1_*alpha_10_ + 1.6194411239978836*alpha_2_*alpha_10_ + (-1.6361468125699452)*alpha_3_*alpha_10_ + 0.032672656135275077*alpha_4_*alpha_10_ + (-1.0149322937837446)*alpha_5_*alpha_10_ + 0.3463231459173513*alpha_6_*alpha_10_ + (-0.92644440631321756)*alpha_7_*alpha_10_ + 0.3259075768399794*alpha_8_*alpha_10_ + (-0.55164665986894368)*alpha_9_*alpha_10_ + 0.1995439494172555*alpha_11_*alpha_11_ + 0.2950774787212188*alpha_1_*alpha_11_ + (-0.9666238284196049)*alpha_2_*alpha_11_ + 0.90324605349672349*alpha_3_*alpha_11_ + (-0.014100128831531411)*alpha_4_*alpha_11_ + 0.702834307541034*alpha_5_*alpha_11_ + (-0.24179059185327029)*alpha_6_*alpha_11_ + 0.6055570667933838*alpha_7_*alpha_11_ + (-0.3788585227469301)*alpha_8_*alpha_11_ + 0.32146314600585718*alpha_9_*alpha_11_ + (-0.6179656612427072)*alpha_10_*alpha_11_ + 0.11654496659312026*alpha_12_*alpha_12_ + (-1.4842859543143967)*alpha_1_*alpha_12_ + 0.20481359556550105*alpha_2_*alpha_12_ + (-0.22545266048761997)*alpha_3_*alpha_12_ + 0.011925368536074009*alpha_4_*alpha_12_ + (-0.9949653528325459)*alpha_5_*alpha_12_ + (-0.20005143045418577)*alpha_6_*alpha_12_ + 0.37287676673474124*alpha_7_*alpha_12_ + (-0.2676700986024547)*alpha_8_*alpha_12_ + (-0.015350421192560268)*alpha_9_*alpha_12_ + (-0.01591542494834201)*alpha_10_*alpha_12_ + 0.033922407579109554*alpha_11_*alpha_12_ + 0.024311795055681439*alpha_13_*alpha_13_ + 0.0776129664554151*alpha_1_*alpha_13_ + 0.26571452310175014*alpha_2_*alpha_13_ + (-0.20244569422811334)*alpha_3_*alpha_13_ + 0.00026946860287392193*alpha_4_*alpha_13_ + (-0.22195422609216137)*alpha_5_*alpha_13_ + 0.09680098592430683*alpha_6_*alpha_13_ + (-0.21638918408324476)*alpha_7_*alpha_13_ + 0.22874925559537776*alpha_8_*alpha_13_ + (-0.08550507499454221)*alpha_9_*alpha_13_ + 0.19399578613844215*alpha_10_*alpha_13_ + (-0.13234017865858896)*alpha_11_*alpha_13_ + (-0.0327853378576049)*alpha_12_*alpha_13_) ** 1.5 + (10.888888888888891*alpha_1_*alpha_1_ + 0.9444444444444444*alpha_2_*alpha_2_ + 5.4444444444444446*alpha_1_*alpha_2_ + 0.05555555555555555*alpha_3_*alpha_3_ + (-0.77777777777777779)*alpha_1_*alpha_3_ + (-0.3888888888888889)*alpha_2_*alpha_3_ + 0.3888888888888889*alpha_4_*alpha_4_ + (-2.3333333333333335)*alpha_1_*alpha_4_ + (-1.1111111111111112)*alpha_2_*alpha_4_ + 0.27777777777777779*alpha_3_*alpha_4_ + 4.555555555555555*alpha_5_*alpha_5_ + 10.888888888888889*alpha_1_*alpha_5_ + 4*alpha_2_*alpha_5_ + (-0.77777777777777768)*alpha_3_*alpha_5_ + (-2.444444444444444)*alpha_4_*alpha_5_ + 0.3888888888888889*alpha_6_*alpha_6_ + 2.3333333333333335*alpha_1_*alpha_6_ + 1.0555555555555556*alpha_2_*alpha_6_ + (-0.2222222222222222)*alpha_3_*alpha_6_ + (-0.7222222222222223)*alpha_4_*alpha_6_ + 2.5555555555555554*alpha_5_*alpha_6_ + 1.3333333333333333*alpha_7_*alpha_7_ + 6.222222222222222*alpha_1_*alpha_7_ + 0.8888888888888888*alpha_2_*alpha_7_ + 1.3333333333333333*alpha_5_*alpha_7_ + 0.3888888888888889*alpha_8_*alpha_8_ + 0.77777777777777779*alpha_1_*alpha_8_ + 0.5*alpha_2_*alpha_8_ + (-0.2222222222222222)*alpha_3_*alpha_8_ + (-0.3888888888888889)*alpha_4_*alpha_8_ + 0.55555555555555558*alpha_5_*alpha_8_ + 0.1111111111111111*alpha_6_*alpha_8_ + 0.05555555555555555*alpha_9_*alpha_9_ + (-0.77777777777777779)*alpha_1_*alpha_9_ + (-0.33333333333333337)*alpha_2_*alpha_9_ + 0.05555555555555555*alpha_3_*alpha_9_ + 0.2222222222222222*alpha_4_*alpha_9_ + (-0.8888888888888888)*alpha_5_*alpha_9_ + (-0.27777777777777779)*alpha_6_*alpha_9_ + 0.05555555555555555*alpha_8_*alpha_9_ + 0.05555555555555555*alpha_10_*alpha_10_ + 0.05555555555555555*alpha_2_*alpha_10_ + (-0.05555555555555555)*alpha_3_*alpha_10_ + (-0.05555555555555555)*alpha_4_*alpha_10_ + (-0.11111111111111113)*alpha_5_*alpha_10_ + (-0.05555555555555555)*alpha_6_*alpha_10_ + 0.27777777777777779*alpha_8_*alpha_10_ + 0.05555555555555555*alpha_9_*alpha_10_ + 0.05555555555555555*alpha_11_*alpha_11_ + (-0.77777777777777779)*alpha_1_*alpha_11_ + (-0.3888888888888889)*alpha_2_*alpha_11_ + 0.1111111111111111*alpha_3_*alpha_11_ + 0.27777777777777779*alpha_4_*alpha_11_ + (-0.77777777777777768)*alpha_5_*alpha_11_ + (-0.2222222222222222)*alpha_6_*alpha_11_ + (-0.2222222222222222)*alpha_8_*alpha_11_ + 0.05555555555555555*alpha_9_*alpha_11_ + (-0.05555555555555555)*alpha_10_*alpha_11_ + 0.3888888888888889*alpha_12_*alpha_12_ + 3.8888888888888893*alpha_1_*alpha_12_ + 0.83333333333333326*alpha_2_*alpha_12_ + (-0.1111111111111111)*alpha_3_*alpha_12_ + (-0.27777777777777779)*alpha_4_*alpha_12_ + 1.4444444444444442*alpha_5_*alpha_12_ + 0.2222222222222222*alpha_6_*alpha_12_ + 1.3333333333333333*alpha_7_*alpha_12_ + 0.2222222222222222*alpha_8_*alpha_12_ + (-0.05555555555555555)*alpha_9_*alpha_12_ + 0.05555555555555555*alpha_10_*alpha_12_ + (-0.1111111111111111)*alpha_11_*alpha_12_ + 0.05555555555555555*alpha_13_*alpha_13_ + 0.77777777777777779*alpha_1_*alpha_13_ + 0.3888888888888889*alpha_2_*alpha_13_ + (-0.1111111111111111)*alpha_3_*alpha_13_ + (-0.27777777777777779)*alpha_4_*alpha_13_ + 0.77777777777777768*alpha_5_*alpha_13_ + 0.2222222222222222*alpha_6_*alpha_13_ + 0.2222222222222222*alpha_8_*alpha_13_ + (-0.05555555555555555)*alpha_9_*alpha_13_ + 0.05555555555555555*alpha_10_*alpha_13_ + (-0.1111111111111111)*alpha_11_*alpha_13_ + 0.1111111111111111*alpha_12_*alpha_13_) ** 1.5) ** 0.6666666666666666 ;

alpha_1_.l = 0;
alpha_2_.l = 0;
alpha_3_.l = 0.0009331647558079581;
alpha_4_.l = 0.017264605524907495;
alpha_5_.l = 0;
alpha_6_.l = 1.3099654111089185;
alpha_7_.l = 0;
alpha_8_.l = 0.011895149335594102;
alpha_9_.l = 0;
alpha_10_.l = 0.5797255102788079;
alpha_11_.l = 1.984746920801657;
alpha_12_.l = 1.0002503187089054;
alpha_13_.l = 1.095218919485403;

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

