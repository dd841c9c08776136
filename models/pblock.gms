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
objective.. GAMS_OBJECTIVE =e= (4*alpha_1_ + 1.8333333333333333*alpha_2_ + alpha_3_ + 0.6666666666666666*alpha_4_ + 2.5*alpha_5_ + 1.6666666666666667*alpha_6_ + 1.8333333333333333*alpha_7_ + 1.3333333333333333*alpha_8_ + alpha_9_ + 1.1666666666666667*alpha_10_ + alpha_11_ + 1.6666666666666667*alpha_12_ + 1.3333333333333333*alpha_13_) - 0.5*((5.2726477775443108*alpha_1_*alpha_1_ + 1.4931670730315649*alpha_2_*alpha_2_ + (-2.9481352709197823)*alpha_1_*alpha_2_ + 2.0894636787992455*alpha_3_*alpha_3_ + 3.514714256994047*alpha_1_*alpha_3_ + (-3.2711519150914654)*alpha_2_*alpha_3_ + 0.0024775905422557186*alpha_4_*alpha_4_ + (-0.13644666544849868)*alpha_1_*alpha_4_ + 0.08315724960190165*alpha_2_*alpha_4_ + (-0.12942543939485238)*alpha_3_*alpha_4_ + 4.442295461787421*alpha_5_*alpha_5_ + 6.333730368577326*alpha_1_*alpha_5_ + (-2.1178081136338238)*alpha_2_*alpha_5_ + 0.76373799583987567*alpha_3_*alpha_5_ + 0.01721158158584729*alpha_4_*alpha_5_ + 0.1432313593364769*alpha_6_*alpha_6_ + 0.995975516207467*alpha_1_*alpha_6_ + 0.36362861781709277*alpha_2_*alpha_6_ + (-0.315901316748173)*alpha_3_*alpha_6_ + (-0.0014908772220369373)*alpha_4_*alpha_6_ + 0.40206688411402836*alpha_5_*alpha_6_ + 0.7223050794899148*alpha_7_*alpha_7_ + (-1.4773982553228315)*alpha_1_*alpha_7_ + (-1.2148257885386557)*alpha_2_*alpha_7_ + 1.3144747768885858*alpha_3_*alpha_7_ + (-0.019974857970879917)*alpha_4_*alpha_7_ + (-0.87173335496645088)*alpha_5_*alpha_7_ + (-0.6184002188290689)*alpha_6_*alpha_7_ + 1.5072195338482213*alpha_8_*alpha_8_ + 2.2835446544272315*alpha_1_*alpha_8_ + (-0.20875437498061555)*alpha_2_*alpha_8_ + 1.4998575644280583*alpha_3_*alpha_8_ + (-0.09465803557535361)*alpha_4_*alpha_8_ + (-2.194992345813496)*alpha_5_*alpha_8_ + 0.40804479468846777*alpha_6_*alpha_8_ + (-0.4723822426000566)*alpha_7_*alpha_8_ + 0.1871101419446683*alpha_9_*alpha_9_ + 0.7325642014335267*alpha_1_*alpha_9_ + (-1.0074590440152844)*alpha_2_*alpha_9_ + 1.2155548676569419*alpha_3_*alpha_9_ + (-0.033746045770552846)*alpha_4_*alpha_9_ + 0.2119068816419799*alpha_5_*alpha_9_ + (-0.16255985577801785)*alpha_6_*alpha_9_ + 0.5191399970579471*alpha_7_*alpha_9_ + 0.24758910304717535*alpha_8_*alpha_9_ + 0.4916810463737548*alpha_10_*alpha_10_ + (-0.79128845672996717)*alpha_1_*alpha_10_ + 1.6194411239978836*alpha_2_*alpha_10_ + (-1.6361468125699454)*alpha_3_*alpha_10_ + 0.032672656135275119*alpha_4_*alpha_10_ + (-1.0149322937837446)*alpha_5_*alpha_10_ + 0.34632314591735125*alpha_6_*alpha_10_ + (-0.92644440631321756)*alpha_7_*alpha_10_ + 0.3259075768399794*alpha_8_*alpha_10_ + (-0.55164665986894368)*alpha_9_*alpha_10_ + 0.19954394941725534*alpha_11_*alpha_11_ + 0.29507747872121848*alpha_1_*alpha_11_ + (-0.96662382841960448)*alpha_2_*alpha_11_ + 0.903246053496723*alpha_3_*alpha_11_ + (-0.014100128831531425)*alpha_4_*alpha_11_ + 0.70283430754103349*alpha_5_*alpha_11_ + (-0.24179059185327015)*alpha_6_*alpha_11_ + 0.6055570667933835*alpha_7_*alpha_11_ + (-0.37885852274692966)*alpha_8_*alpha_11_ + 0.3214631460058571*alpha_9_*alpha_11_ + (-0.6179656612427069)*alpha_10_*alpha_11_ + 0.11654496659312027*alpha_12_*alpha_12_ + (-1.4842859543143971)*alpha_1_*alpha_12_ + 0.20481359556550116*alpha_2_*alpha_12_ + (-0.22545266048762019)*alpha_3_*alpha_12_ + 0.011925368536074019*alpha_4_*alpha_12_ + (-0.9949653528325457)*alpha_5_*alpha_12_ + (-0.2000514304541858)*alpha_6_*alpha_12_ + 0.37287676673474129*alpha_7_*alpha_12_ + (-0.26767009860245483)*alpha_8_*alpha_12_ + (-0.015350421192560316)*alpha_9_*alpha_12_ + (-0.015915424948341958)*alpha_10_*alpha_12_ + 0.033922407579109526*alpha_11_*alpha_12_ + 0.024311795055681457*alpha_13_*alpha_13_ + 0.07761296645541515*alpha_1_*alpha_13_ + 0.2657145231017502*alpha_2_*alpha_13_ + (-0.20244569422811334)*alpha_3_*alpha_13_ + 0.00026946860287392366*alpha_4_*alpha_13_ + (-0.22195422609216148)*alpha_5_*alpha_13_ + 0.096800985924306859*alpha_6_*alpha_13_ + (-0.21638918408324478)*alpha_7_*alpha_13_ + 0.22874925559537793*alpha_8_*alpha_13_ + (-0.08550507499454221)*alpha_9_*alpha_13_ + 0.1939957861384422*alpha_10_*alpha_13_ + (-0.13234017865858894)*alpha_11_*alpha_13_ + (-0.03278533785760492)*alpha_12_*alpha_13_) ** 1.5 + (10.888888888888891*alpha_1_*alpha_1_ + 0.9444444444444444*alpha_2_*alpha_2_ + 5.4444444444444446*alpha_1_*alpha_2_ + 0.05555555555555555*alpha_3_*alpha_3_ + (-0.77777777777777779)*alpha_1_*alpha_3_ + (-0.3888888888888889)*alpha_2_*alpha_3_ + 0.3888888888888889*alpha_4_*alpha_4_ + (-2.3333333333333335)*alpha_1_*alpha_4_ + (-1.1111111111111112)*alpha_2_*alpha_4_ + 0.27777777777777779*alpha_3_*alpha_4_ + 4.555555555555555*alpha_5_*alpha_5_ + 10.888888888888889*alpha_1_*alpha_5_ + 4*alpha_2_*alpha_5_ + (-0.77777777777777768)*alpha_3_*alpha_5_ + (-2.444444444444444)*alpha_4_*alpha_5_ + 0.3888888888888889*alpha_6_*alpha_6_ + 2.3333333333333335*alpha_1_*alpha_6_ + 1.0555555555555556*alpha_2_*alpha_6_ + (-0.2222222222222222)*alpha_3_*alpha_6_ + (-0.7222222222222223)*alpha_4_*alpha_6_ + 2.5555555555555554*alpha_5_*alpha_6_ + 1.3333333333333333*alpha_7_*alpha_7_ + 6.222222222222222*alpha_1_*alpha_7_ + 0.8888888888888888*alpha_2_*alpha_7_ + 1.3333333333333333*alpha_5_*alpha_7_ + 0.3888888888888889*alpha_8_*alpha_8_ + 0.77777777777777779*alpha_1_*alpha_8_ + 0.5*alpha_2_*alpha_8_ + (-0.2222222222222222)*alpha_3_*alpha_8_ + (-0.3888888888888889)*alpha_4_*alpha_8_ + 0.55555555555555558*alpha_5_*alpha_8_ + 0.1111111111111111*alpha_6_*alpha_8_ + 0.05555555555555555*alpha_9_*alpha_9_ + (-0.77777777777777779)*alpha_1_*alpha_9_ + (-0.33333333333333337)*alpha_2_*alpha_9_ + 0.05555555555555555*alpha_3_*alpha_9_ + 0.2222222222222222*alpha_4_*alpha_9_ + (-0.8888888888888888)*alpha_5_*alpha_9_ + (-0.27777777777777779)*alpha_6_*alpha_9_ + 0.05555555555555555*alpha_8_*alpha_9_ + 0.05555555555555555*alpha_10_*alpha_10_ + 0.05555555555555555*alpha_2_*alpha_10_ + (-0.05555555555555555)*alpha_3_*alpha_10_ + (-0.05555555555555555)*alpha_4_*alpha_10_ + (-0.11111111111111113)*alpha_5_*alpha_10_ + (-0.05555555555555555)*alpha_6_*alpha_10_ + 0.27777777777777779*alpha_8_*alpha_10_ + 0.05555555555555555*alpha_9_*alpha_10_ + 0.05555555555555555*alpha_11_*alpha_11_ + (-0.77777777777777779)*alpha_1_*alpha_11_ + (-0.3888888888888889)*alpha_2_*alpha_11_ + 0.1111111111111111*alpha_3_*alpha_11_ + 0.27777777777777779*alpha_4_*alpha_11_ + (-0.77777777777777768)*alpha_5_*alpha_11_ + (-0.2222222222222222)*alpha_6_*alpha_11_ + (-0.2222222222222222)*alpha_8_*alpha_11_ + 0.05555555555555555*alpha_9_*alpha_11_ + (-0.05555555555555555)*alpha_10_*alpha_11_ + 0.3888888888888889*alpha_12_*alpha_12_ + 3.8888888888888893*alpha_1_*alpha_12_ + 0.83333333333333326*alpha_2_*alpha_12_ + (-0.1111111111111111)*alpha_3_*alpha_12_ + (-0.27777777777777779)*alpha_4_*alpha_12_ + 1.4444444444444442*alpha_5_*alpha_12_ + 0.2222222222222222*alpha_6_*alpha_12_ + 1.3333333333333333*alpha_7_*alpha_12_ + 0.2222222222222222*alpha_8_*alpha_12_ + (-0.05555555555555555)*alpha_9_*alpha_12_ + 0.05555555555555555*alpha_10_*alpha_12_ + (-0.1111111111111111)*alpha_11_*alpha_12_ + 0.05555555555555555*alpha_13_*alpha_13_ + 0.77777777777777779*alpha_1_*alpha_13_ + 0.3888888888888889*alpha_2_*alpha_13_ + (-0.1111111111111111)*alpha_3_*alpha_13_ + (-0.27777777777777779)*alpha_4_*alpha_13_ + 0.77777777777777768*alpha_5_*alpha_13_ + 0.2222222222222222*alpha_6_*alpha_13_ + 0.2222222222222222*alpha_8_*alpha_13_ + (-0.05555555555555555)*alpha_9_*alpha_13_ + 0.05555555555555555*alpha_10_*alpha_13_ + (-0.1111111111111111)*alpha_11_*alpha_13_ + 0.1111111111111111*alpha_12_*alpha_13_) ** 1.5) ** 0.6666666666666666 ;

alpha_1_.l = 0;
alpha_2_.l = 0;
alpha_3_.l = 0.000933164783415652;
alpha_4_.l = 0.01726460543003938;
alpha_5_.l = 0;
alpha_6_.l = 1.3099654111285535;
alpha_7_.l = 0;
alpha_8_.l = 0.011895149328381871;
alpha_9_.l = 0;
alpha_10_.l = 0.5797255104287293;
alpha_11_.l = 1.9847469209111388;
alpha_12_.l = 1.0002503187087015;
alpha_13_.l = 1.0952189192810402;

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

